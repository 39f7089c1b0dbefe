import { type ReactNode, useEffect } from 'react';

/** The heading of a page, which also names the browser tab. */
export function PageTitle({ children, title }: { children: ReactNode; title: string }) {
  useEffect(() => {
    document.title = `${title} · Pipewright`;
  }, [title]);
  return <h1>{children}</h1>;
}
