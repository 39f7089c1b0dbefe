import type { ApiClient, Schemas } from '@pipewright/client';
import { useQuery } from '@tanstack/react-query';
import { createContext, type ReactNode, useContext } from 'react';
import { ErrorNotice, Loading } from '../ui/notices.js';
import { dataOf } from './data.js';
import { ProjectLiveUpdates } from './live.js';
import { useSession } from './session.js';

interface ProjectState {
  project: Schemas['Project'];
  /** A client sending this project's header. */
  client: ApiClient;
  /** The path of a page of this project: `path('pipelines')` is `/p/web-shop/pipelines`. */
  path(...segments: string[]): string;
}

const ProjectContext = createContext<ProjectState | undefined>(undefined);

/** Finds the project named in the URL, and gives its pages a client working in it. */
export function ProjectProvider({ name, children }: { name: string; children: ReactNode }) {
  const session = useSession();
  const query = useQuery({
    queryKey: ['project', name],
    queryFn: () => dataOf(session.client.GET('/projects/name/{name}', { params: { path: { name } } })),
  });
  if (query.error) return <ErrorNotice error={query.error} />;
  if (!query.data) return <Loading what="project" />;
  const project = query.data;
  const value: ProjectState = {
    project,
    client: session.projectClient(project.id),
    path: (...segments) => ['', 'p', encodeURIComponent(project.name), ...segments].join('/'),
  };
  return (
    <ProjectContext.Provider value={value}>
      <ProjectLiveUpdates client={value.client} projectId={project.id}>
        {children}
      </ProjectLiveUpdates>
    </ProjectContext.Provider>
  );
}

export function useProject(): ProjectState {
  const state = useContext(ProjectContext);
  if (!state) throw new Error('useProject outside ProjectProvider');
  return state;
}
