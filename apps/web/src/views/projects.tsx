import { useQuery } from '@tanstack/react-query';
import { Link } from 'wouter';
import { firstElements } from '../api/data.js';
import { useSession } from '../api/session.js';
import { ErrorNotice, Loading } from '../ui/notices.js';
import { PageTitle } from '../ui/page.js';

/** The projects of the organization: where every visit starts. */
export function ProjectsPage() {
  const { client, organization } = useSession();
  const projects = useQuery({
    queryKey: ['projects'],
    queryFn: () => firstElements(client, '/projects', { sort: 'name', size: 100 }, 500),
  });
  return (
    <>
      <PageTitle title="Projects">Projects of {organization.name}</PageTitle>
      {projects.error && <ErrorNotice error={projects.error} />}
      {!projects.data && !projects.error && <Loading what="projects" />}
      {projects.data?.length === 0 && <p>No project yet: create one with the API or the CLI.</p>}
      <ul className="cards">
        {projects.data?.map((project) => (
          <li key={project.id}>
            <Link href={`/p/${encodeURIComponent(project.name)}`}>{project.name}</Link>
          </li>
        ))}
      </ul>
    </>
  );
}
