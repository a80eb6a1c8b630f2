/**
 * Text that echoes what a person typed or a file's name, made safe for a terminal: every
 * control character but the newline and the tab (C0, DEL, C1, which can move the cursor, clear
 * the screen or hide text) and the bidirectional overrides (which reorder what is shown) written
 * as JSON writes them (`\r`, `\u001b`), so the message shows what was given, nothing else.
 */
export function printable(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (character) =>
    character === '\r' ? '\\r' : `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * Text with the credentials of any URL in it (`oci://user:password@host`, `https://token@host`)
 * replaced by `<credentials>`: a message, a usage error or a tool's output never shows them.
 */
export function redactCredentials(text: string): string {
  return text.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@]+@/gi, '$1<credentials>@');
}
