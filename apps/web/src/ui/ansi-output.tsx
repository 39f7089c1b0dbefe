import Anser from 'anser';
import { Fragment, type ReactNode, useMemo } from 'react';

/** Splits text around each case-insensitive occurrence of `search`, marking them. */
function highlight(text: string, search: string, key: string): ReactNode[] {
  if (!search) return [text];
  const parts: ReactNode[] = [];
  const lower = text.toLowerCase();
  const needle = search.toLowerCase();
  let from = 0;
  for (let at = lower.indexOf(needle); at !== -1; at = lower.indexOf(needle, from)) {
    if (at > from) parts.push(text.slice(from, at));
    parts.push(<mark key={`${key}-${at}`}>{text.slice(at, at + needle.length)}</mark>);
    from = at + needle.length;
  }
  if (from < text.length) parts.push(text.slice(from));
  return parts;
}

/** How many times `search` occurs in the text of an output, its colour codes left out. */
export function countMatches(output: string, search: string): number {
  if (!search) return 0;
  const text = Anser.ansiToText(output).toLowerCase();
  const needle = search.toLowerCase();
  let count = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) count += 1;
  return count;
}

/**
 * The output of a step with its ANSI colours and decorations rendered as classes (no HTML is
 * built from the text: every piece is a text node), and the occurrences of `search` marked.
 */
export function AnsiOutput({ output, search, label }: { output: string; search: string; label: string }) {
  const pieces = useMemo(() => Anser.ansiToJson(output, { use_classes: true, remove_empty: true }), [output]);
  return (
    <section aria-label={label}>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard. */}
      <pre className="output" tabIndex={0}>
        {pieces.map((piece, index) => {
          const classes = [
            piece.fg && `${piece.fg}-fg`,
            piece.bg && `${piece.bg}-bg`,
            ...piece.decorations.map((decoration) => `ansi-${decoration}`),
          ].filter(Boolean);
          const style = {
            ...(piece.fg_truecolor ? { color: `rgb(${piece.fg_truecolor})` } : {}),
            ...(piece.bg_truecolor ? { backgroundColor: `rgb(${piece.bg_truecolor})` } : {}),
          };
          const key = String(index);
          return classes.length > 0 || piece.fg_truecolor || piece.bg_truecolor ? (
            <span key={key} className={classes.join(' ')} style={style}>
              {highlight(piece.content, search, key)}
            </span>
          ) : (
            <Fragment key={key}>{highlight(piece.content, search, key)}</Fragment>
          );
        })}
      </pre>
    </section>
  );
}
