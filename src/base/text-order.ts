/**
 * The one order of names and paths in everything the program writes or prints: UTF-16 code
 * unit order, as `Array.prototype.sort()` uses, the same on every machine.
 *
 * Not `localeCompare`: it collates by the machine's locale (node's ICU takes it from
 * `LC_ALL`/`LANG`), and Lithuanian, for one, sorts `y` before `j`; a render would then depend
 * on who ran it. It is also slower to start (loading the collation costs milliseconds).
 */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
