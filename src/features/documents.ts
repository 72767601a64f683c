import type { Feature } from '../features.js';
import { hubPages } from '../commands/hubs.js';
import { DOC_INFO_KEY } from '../commands/info.js';
import { ACTION_USAGE_KEY } from '../commands/help.js';
import { CURRENT_DOCUMENT_KEY } from '../commands/docContract.js';
import { actCommands, actionFallback } from '../commands/documents/act.js';
import { currentDocument } from '../commands/documents/current.js';
import { editCommand } from '../commands/documents/edit.js';
import { DOC_MAX_BYTES, DOCS_CONFIG_KEY, type DocsConfig } from '../commands/documents/fetch.js';
import { appHub, toolHub } from '../commands/documents/hubs.js';
import { actionUsageLines, docInfoLines } from '../commands/documents/info.js';
import { lsCommand } from '../commands/documents/ls.js';
import { navCommand } from '../commands/documents/nav.js';
import { backCommand, closeCommand, openCommand, refreshCommand } from '../commands/documents/open.js';
import { sourceCommand } from '../commands/documents/source.js';
import { appendCommand, replaceCommand, undoCommand, writeCommand } from '../commands/documents/write.js';

/**
 * Documents (issue 5): /open and navigation, /source, /nav, /info and /help document lines, the
 * /act listing and help, the file commands, the `app` and `tool` hubs, and the current-document
 * provider the actions feature builds on (src/commands/docContract.ts).
 */
export const documentsFeature: Feature = (ctx, registry) => {
  const ext = ctx.system.services.ext;
  const config: DocsConfig = { fetchTimeoutMs: 30000, maxBytes: DOC_MAX_BYTES, maxRedirects: 5 };
  ext.set(DOCS_CONFIG_KEY, config);
  ext.set(CURRENT_DOCUMENT_KEY, currentDocument);
  ext.set(DOC_INFO_KEY, docInfoLines);
  ext.set(ACTION_USAGE_KEY, actionUsageLines);
  registry.register(openCommand, refreshCommand, backCommand, closeCommand, navCommand, sourceCommand, lsCommand);
  registry.register(editCommand, writeCommand, appendCommand, replaceCommand, undoCommand, ...actCommands);
  registry.addFallback(actionFallback);
  hubPages.set('app', appHub);
  hubPages.set('tool', toolHub);
};
