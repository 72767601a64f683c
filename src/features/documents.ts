import { actCommands, actionFallback } from '../commands/documents/act.js';
import { editCommand } from '../commands/documents/edit.js';
import { defaultDocsConfig } from '../commands/documents/fetch.js';
import { closeParsePool } from '../commands/documents/parseCache.js';
import { appHub, toolHub } from '../commands/documents/hubs.js';
import { actionUsageLines, docInfoLines } from '../commands/documents/info.js';
import { lsCommand } from '../commands/documents/ls.js';
import { navCommand } from '../commands/documents/nav.js';
import { backCommand, closeCommand, openCommand, refreshCommand } from '../commands/documents/open.js';
import { sourceCommand } from '../commands/documents/source.js';
import { appendCommand, replaceCommand, undoCommand, writeCommand } from '../commands/documents/write.js';
import { dropSessionUndo } from '../effects/undoCopies.js';
import type { Feature } from './types.js';

/**
 * Documents: /open and navigation, /source, /nav, /info and /help document lines, the
 * /act listing and help, the file commands, and the `app` and `tool` hubs.
 */
export const documentsFeature: Feature = ({ info }) => ({
  commands: [
    openCommand, refreshCommand, backCommand, closeCommand, navCommand, sourceCommand, lsCommand,
    editCommand, writeCommand, appendCommand, replaceCommand, undoCommand, ...actCommands,
  ],
  fallbacks: [actionFallback],
  hubs: { app: appHub, tool: toolHub },
  services: { documents: { info: docInfoLines, usage: actionUsageLines, config: defaultDocsConfig() } },
  // Undo records end with their session (behaviour.md §1.3): so do the copies they point at.
  onSessionEnd: (s) => {
    if (s.undo.length > 0) dropSessionUndo({ dataDir: info.dataDir, wire: info.wire, agentId: s.agentId, sessionId: s.id });
  },
  onShutdown: () => closeParsePool(),
});
