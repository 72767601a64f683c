import { AGENT_WIRE, type WireDescription } from '../domain/wire.js';

/**
 * Help texts of behaviour.md §2.4: the fixed `/help` page and `/help <command>` entries
 * (syntax lines, one sentence, flags) for every built-in command.
 */

/** The `/help` page body after `Loom commands` / `---` (behaviour.md §2.4). */
export const HELP_PAGE = [
  'Documents  /open <file|folder|URL|app:NAME|@shortcut|#anchor> · /back · /refresh · /close · /nav [menu] · /source [target] · /info [@shortcut]',
  'Actions    /act · /act.<id> --help · /act.<id> [values] [--field value]',
  'Files      /ls [path] · /edit <file> · /write <file> · /append <file> · /replace <file> · /undo [file]',
  'Variables  /set · /set {name} = "v" · /set $NAME = "v" · /unset <names>',
  'Shell      /exec [--timeout s] <command>',
  'Packages   /install <source> · /uninstall <name> · /packages',
  'Events     /events · /events.read <id> · /events.ack <id> · /events.clear [--all] · /webhook [show|rotate]',
  'Topics     /topics [type]',
  'Details: /help <command>',
];

interface HelpEntry {
  syntax: string[];
  sentence: string;
  flags?: string[];
}

/** The entries that name the identity or the topic types (behaviour.md §11: "agent" read as "user"). */
function wireEntries(wire: WireDescription): Record<'webhook' | 'topics', HelpEntry> {
  return {
    webhook: { syntax: ['/webhook [show|rotate]'], sentence: `Shows or rotates the local webhook URL of this ${wire.noun}.` },
    topics: { syntax: [`/topics [${wire.topicTypes.join('|')}]`], sentence: `Lists the topics of this ${wire.noun} with their state.` },
  };
}

/** `/help <command>` entries of the agent wire, keyed by command word. */
export const HELP_ENTRIES: Record<string, HelpEntry> = {
  help: { syntax: ['/help [<command>]'], sentence: 'Lists the commands, or explains one.' },
  info: { syntax: ['/info [@<shortcut>]'], sentence: 'Shows the state of this topic, or the value of one shortcut.' },
  open: { syntax: ['/open <file|folder|URL|app:NAME|@shortcut|#anchor>'], sentence: 'Opens a document, a folder listing, an installed app or an anchor of the current document.' },
  back: { syntax: ['/back'], sentence: 'Returns to the previous document of this topic.' },
  refresh: { syntax: ['/refresh'], sentence: 'Reloads the current document from its source and re-runs its default action.' },
  close: { syntax: ['/close'], sentence: 'Closes the current document and clears the history; session variables stay.' },
  nav: { syntax: ['/nav [<menu>]'], sentence: 'Lists the menus of the current document, or the entries of one menu.' },
  source: { syntax: ['/source [<target>]'], sentence: 'Shows the raw text of the current document or of a target, templates included.' },
  ls: { syntax: ['/ls [--all] [<path>]'], sentence: 'Lists a folder of the workspace.', flags: ['--all  include entries whose name starts with a dot'] },
  edit: { syntax: ['/edit <file>[#<anchor>] [--lines a-b]'], sentence: 'Shows a file with line numbers, ready for /replace.', flags: ['--lines a-b  show only these lines'] },
  write: { syntax: ['/write [--force] <file>', '<content on the following lines>'], sentence: 'Creates or replaces a file with the body.', flags: ['--force  replace a file that was not read in this topic'] },
  append: { syntax: ['/append <file>', '<content on the following lines>'], sentence: 'Appends the body to a file, creating the file (not its folder) when missing.' },
  replace: { syntax: ['/replace <file> --lines a-b', '/replace <file> [--all] --old "<text>"', '<new text on the following lines>'], sentence: 'Replaces lines or exact text of a file with the body.', flags: ['--lines a-b  the lines to replace', '--old "<text>"  the exact text to replace', '--all  replace every occurrence'] },
  undo: { syntax: ['/undo [<file>]'], sentence: 'Reverts the last edit made in this topic.' },
  act: { syntax: ['/act', '/act.<id> --help', '/act.<id> [values] [--field value]'], sentence: 'Lists the actions of the current document, explains one, or calls one.', flags: ['--help  show the call interface', '--<field>-file <path>  load a field value from a file'] },
  action: { syntax: ['/action.<id> [values] [--field value]'], sentence: 'Same as /act.' },
  set: { syntax: ['/set', '/set {name} = "value"', '/set $NAME = "value"'], sentence: 'Lists the variables in scope, or sets session ({name}) and persistent ($NAME) variables.' },
  unset: { syntax: ['/unset $NAME | {name} …'], sentence: 'Removes variables from the scope /set writes to.' },
  exec: { syntax: ['/exec [--timeout <s>] <shell text>'], sentence: 'Runs a shell command; bash:<name> topics keep one shell alive (cwd, exports, functions and aliases survive).', flags: ['--timeout <s>  1 to 600 seconds (default 120)'] },
  install: {
    syntax: ['/install <path|URL|gh:<owner>/<repo>[/<path>][@<ref>]> [--app|--tool] [--link|--local] [--as <name>]'],
    sentence: 'Installs a package of documents from a file, a folder, a GitHub repository or a URL (manifest or document).',
    flags: ['--app / --tool  the hub it is listed in', '--link / --local  register in place (or link a URL) / copy the files', '--as <name>  the local package name'],
  },
  uninstall: { syntax: ['/uninstall <name>'], sentence: 'Removes an installed package (its variables are kept).' },
  packages: { syntax: ['/packages'], sentence: 'Lists the installed packages.' },
  events: { syntax: ['/events [list] [--all]', '/events.read <id>', '/events.ack <id>', '/events.clear [--all]'], sentence: 'Reads and acknowledges the event inbox.', flags: ['--all  include acked events (list) or delete all events (clear)'] },
  ...wireEntries(AGENT_WIRE),
};

/** The `/help <word>` entry on a wire, or undefined (words the wire lacks have none: behaviour.md §11). */
export function helpEntry(wire: WireDescription, word: string): HelpEntry | undefined {
  if (!Object.hasOwn(HELP_ENTRIES, word) || wire.unavailableWords.includes(word)) return undefined;
  const own: Record<string, HelpEntry> = wireEntries(wire);
  return Object.hasOwn(own, word) ? own[word] : HELP_ENTRIES[word];
}

/** The `/help` page on a wire: a line naming commands the wire lacks (the user wire's Events) is left out. */
export function helpPage(wire: WireDescription): string[] {
  return HELP_PAGE.filter((line) => !wire.unavailableWords.some((w) => new RegExp(`/${w}\\b`).test(line)));
}
