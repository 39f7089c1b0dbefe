import { Route, Switch } from 'wouter';
import { ProjectProvider } from './api/project.js';
import { useSessionState } from './api/session.js';
import { Layout } from './ui/layout.js';
import { PageTitle } from './ui/page.js';
import { CommandPage, CommandsPage } from './views/commands.js';
import { EventPage, EventsPage } from './views/events.js';
import { HomePage } from './views/home.js';
import { OrganizationPage } from './views/organization.js';
import { PipelinePage } from './views/pipeline.js';
import { PipelinesPage } from './views/pipelines.js';
import { ProjectsPage } from './views/projects.js';
import { isResourceType, ResourcesPage } from './views/resources.js';
import { SignInPage } from './views/sign-in.js';
import { TaskPage } from './views/task.js';

/** Signed out, every address shows the sign-in form, and the page asked for once signed in. */
export function App() {
  const { session } = useSessionState();
  if (!session) return <SignInPage />;
  return (
    <Layout>
      <Switch>
        <Route path="/" component={ProjectsPage} />
        <Route path="/organization" component={OrganizationPage} />
        <Route path="/p/:project/*?">
          {(params) => (
            <ProjectProvider name={params.project}>
              <ProjectRoutes />
            </ProjectProvider>
          )}
        </Route>
        <Route component={NotFound} />
      </Switch>
    </Layout>
  );
}

function ProjectRoutes() {
  return (
    <Switch>
      <Route path="/p/:project" component={HomePage} />
      <Route path="/p/:project/pipelines" component={PipelinesPage} />
      <Route path="/p/:project/pipelines/:id">{(params) => <PipelinePage id={params.id} />}</Route>
      <Route path="/p/:project/tasks/:id">{(params) => <TaskPage id={params.id} />}</Route>
      <Route path="/p/:project/commands" component={CommandsPage} />
      <Route path="/p/:project/commands/:name">{(params) => <CommandPage name={params.name} />}</Route>
      <Route path="/p/:project/events" component={EventsPage} />
      <Route path="/p/:project/events/:id">{(params) => <EventPage id={params.id} />}</Route>
      <Route path="/p/:project/resources">{() => <ResourcesPage />}</Route>
      <Route path="/p/:project/resources/:type/:name?">
        {(params) =>
          isResourceType(params.type) ? <ResourcesPage type={params.type} name={params.name} /> : <NotFound />
        }
      </Route>
      <Route component={NotFound} />
    </Switch>
  );
}

function NotFound() {
  return <PageTitle title="Not found">No such page</PageTitle>;
}
