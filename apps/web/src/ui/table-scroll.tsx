import type { ReactNode } from 'react';

/**
 * The horizontal scroller of a table wider than a narrow screen: a named region the keyboard
 * can reach, so that it can be scrolled without a mouse (axe's scrollable-region-focusable).
 */
export function TableScroll({ label, children }: { label: string; children: ReactNode }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region takes focus to be scrolled by keyboard.
    <section className="table-scroll" aria-label={label} tabIndex={0}>
      {children}
    </section>
  );
}
