import { checkedHost, parsePort, splitHostPort } from './hostPort.js';

/** Where a proxy request wants to go (behaviour.md §15.2): a normalised host (no brackets) and a port. */
export interface ProxyTarget {
  host: string;
  port: number;
}

/** An absolute-form request's target: also the path to send on and the Host header to send. */
export interface AbsoluteTarget extends ProxyTarget {
  /** Origin-form request target (`/exec?x`), as the client wrote it, without a fragment. */
  path: string;
  /** `host[:port]` for the Host header, as the URL names it. */
  authority: string;
}

/** The target of `CONNECT host:port` (`[v6]:port` for IPv6); undefined when the port is missing or outside 1–65535. */
export function parseConnectTarget(text: string): ProxyTarget | undefined {
  const hp = splitHostPort(text);
  if (!hp || hp.port === undefined) return undefined;
  const port = parsePort(hp.port);
  const host = checkedHost(hp.host);
  return port === undefined || host === undefined ? undefined : { host, port };
}

/** Index where an absolute URL's path (or query) starts, after `scheme://authority`. */
function pathStart(text: string, authorityStart: number): number {
  for (let i = authorityStart; i < text.length; i++) if (text[i] === '/' || text[i] === '?' || text[i] === '#') return i;
  return text.length;
}

/**
 * The target of an absolute-form request (`GET http://host:port/path HTTP/1.1`); undefined for any
 * other form (origin-form `/path`, `*`, another scheme), a URL with user info or a backslash, or a
 * host or port that is not valid. Host and
 * port are read by the WHATWG URL parser (so `http://2130706433/` means 127.0.0.1, as a browser and
 * the resolver would take it); the path is passed on as the client wrote it.
 */
export function parseAbsoluteTarget(text: string): AbsoluteTarget | undefined {
  if (!/^http:\/\//i.test(text) || text.includes('\\')) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  const host = checkedHost(url.hostname.replace(/^\[(.*)\]$/, '$1'));
  const port = url.port === '' ? 80 : parsePort(url.port);
  if (host === undefined || port === undefined) return undefined;
  const at = pathStart(text, 'http://'.length);
  if (text.slice(0, at).includes('@')) return undefined;
  const rest = text.slice(at).replace(/#.*$/s, '');
  const path = rest === '' ? '/' : rest.startsWith('?') ? `/${rest}` : rest;
  return { host, port, path, authority: url.host };
}
