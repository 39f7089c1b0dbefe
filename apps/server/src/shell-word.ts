/** `text` as one word of a shell command line: as it is when nothing in it is special to sh, else quoted. */
export function shellWord(text: string): string {
  if (/^[\w./:@%+=,-]+$/.test(text)) return text;
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
