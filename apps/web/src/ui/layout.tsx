import { useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { Link, useLocation, useRoute } from 'wouter';
import { firstElements } from '../api/data.js';
import { useSession, useSessionState } from '../api/session.js';

const PROJECT_SECTIONS = [
  ['', 'Home'],
  ['pipelines', 'Pipelines'],
  ['commands', 'Commands'],
  ['events', 'Events'],
  ['resources', 'Resources'],
] as const;

/** The frame of every page once signed in: project switcher, sections, account, sign out. */
export function Layout({ children }: { children: ReactNode }) {
  const { signOut } = useSessionState();
  const session = useSession();
  const [inProject, params] = useRoute('/p/:project/*?');
  const project = inProject ? params.project : undefined;
  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <Link href="/" className="brand">
          Pipewright
        </Link>
        <ProjectSwitcher current={project} />
        <span className="who" title={session.organization.name}>
          {session.account.email_address}
        </span>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      <nav aria-label="Sections" className="sections">
        {project &&
          PROJECT_SECTIONS.map(([section, label]) => (
            <SectionLink
              key={section}
              href={`/p/${encodeURIComponent(project)}${section ? `/${section}` : ''}`}
            >
              {label}
            </SectionLink>
          ))}
        <SectionLink href="/organization">Organization</SectionLink>
      </nav>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}

function SectionLink({ href, children }: { href: string; children: ReactNode }) {
  const [location] = useLocation();
  const current = location === href || (href.split('/').length > 3 && location.startsWith(`${href}/`));
  return (
    <Link href={href} aria-current={current ? 'page' : undefined}>
      {children}
    </Link>
  );
}

/** Projects of the organization, by name (the first 500: a switcher is no place for more). */
function ProjectSwitcher({ current }: { current: string | undefined }) {
  const { client } = useSession();
  const [, navigate] = useLocation();
  const projects = useQuery({
    queryKey: ['projects'],
    queryFn: () => firstElements(client, '/projects', { sort: 'name', size: 100 }, 500),
  });
  return (
    <label className="switcher">
      <span className="visually-hidden">Project</span>
      <select
        value={current ?? ''}
        onChange={(event) => {
          if (event.target.value) navigate(`/p/${encodeURIComponent(event.target.value)}`);
        }}
      >
        <option value="">Choose a project…</option>
        {projects.data?.map((project) => (
          <option key={project.id} value={project.name}>
            {project.name}
          </option>
        ))}
      </select>
    </label>
  );
}
