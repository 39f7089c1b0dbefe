import type { Schemas } from '@pipewright/client';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useLocation } from 'wouter';
import { dataOf, firstElements } from '../api/data.js';
import { useProject } from '../api/project.js';
import { ErrorNotice, Loading } from '../ui/notices.js';
import { PageTitle } from '../ui/page.js';

type Parameter = Schemas['CommandParameter'];
type Value = Schemas['ParameterValue'];

export function CommandsPage() {
  const { project, client, path } = useProject();
  const commands = useQuery({
    queryKey: ['resources', project.id, 'command'],
    queryFn: () => firstElements(client, '/resources', { type: 'command', size: 100 }, 1000),
  });
  return (
    <>
      <PageTitle title={`Commands · ${project.name}`}>Commands</PageTitle>
      {commands.error && <ErrorNotice error={commands.error} />}
      {!commands.data && !commands.error && <Loading what="commands" />}
      {commands.data?.length === 0 && <p className="muted">This project has no command.</p>}
      <ul className="cards">
        {commands.data?.map((command) => (
          <li key={command.id}>
            <Link href={path('commands', command.spec.name)}>{command.spec.name}</Link>
            {command.spec.description && <p className="muted">{command.spec.description}</p>}
          </li>
        ))}
      </ul>
    </>
  );
}

/** The value a form field holds for a parameter, or undefined when left empty. */
function parameterValue(parameter: Parameter, raw: string | boolean): Value | undefined {
  if (parameter.type === 'boolean') return raw === true;
  if (raw === '') return undefined;
  return parameter.type === 'number' ? Number(raw) : String(raw);
}

/** A command and its execute form, made from its parameter specs; then the pipeline it started. */
export function CommandPage({ name }: { name: string }) {
  const { project, client, path } = useProject();
  const queries = useQueryClient();
  const [, navigate] = useLocation();
  const command = useQuery({
    queryKey: ['resource', project.id, 'command', name],
    queryFn: () =>
      dataOf(
        client.GET('/resources/type/{type}/name/{name}', { params: { path: { type: 'command', name } } }),
      ),
  });
  const [values, setValues] = useState<Record<string, string | boolean>>({});
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  if (command.error) return <ErrorNotice error={command.error} />;
  if (!command.data) return <Loading what="command" />;
  const resource = command.data;
  if (resource.spec.type !== 'command') return <ErrorNotice error={new Error(`${name} is not a command`)} />;
  const spec = resource.spec;
  const parameters = spec.data.parameters ?? [];
  const fieldValue = (parameter: Parameter): string | boolean =>
    values[parameter.name] ??
    (parameter.type === 'boolean' ? parameter.default === true : String(parameter.default ?? ''));
  const execute = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const given: Record<string, Value> = {};
      for (const parameter of parameters) {
        const value = parameterValue(parameter, fieldValue(parameter));
        if (value !== undefined) given[parameter.name] = value;
      }
      const execution = await dataOf(
        client.POST('/commands/id/{id}/execute', {
          params: { path: { id: resource.id } },
          body: { parameters: given },
        }),
      );
      await queries.invalidateQueries({ queryKey: ['pipelines', project.id] });
      const [first] = execution.pipeline_ids;
      navigate(first ? path('pipelines', first) : path('pipelines'));
    } catch (failure) {
      setError(failure);
      setBusy(false);
    }
  };
  return (
    <>
      <PageTitle title={`${spec.name} · command`}>Command {spec.name}</PageTitle>
      {spec.description && <p>{spec.description}</p>}
      <p className="muted">Starts: {spec.data.pipelines.join(', ')}</p>
      <form className="stack" onSubmit={(event) => void execute(event)}>
        {parameters.map((parameter) => (
          <ParameterField
            key={parameter.name}
            parameter={parameter}
            value={fieldValue(parameter)}
            onChange={(value) => setValues((current) => ({ ...current, [parameter.name]: value }))}
          />
        ))}
        <div className="actions">
          <button type="submit" className="primary" disabled={busy}>
            Execute {spec.name}
          </button>
        </div>
        {error !== undefined && <ErrorNotice error={error} />}
      </form>
    </>
  );
}

function ParameterField({
  parameter,
  value,
  onChange,
}: {
  parameter: Parameter;
  value: string | boolean;
  onChange: (value: string | boolean) => void;
}) {
  const id = `parameter-${parameter.name}`;
  const hintId = `${id}-hint`;
  const required = parameter.default === undefined;
  const described = parameter.description ? { 'aria-describedby': hintId } : {};
  let input: React.ReactNode;
  if (parameter.type === 'boolean') {
    input = (
      <input
        id={id}
        type="checkbox"
        checked={value === true}
        onChange={(event) => onChange(event.target.checked)}
        {...described}
      />
    );
  } else if (parameter.values) {
    input = (
      <select
        id={id}
        required={required}
        value={String(value)}
        onChange={(event) => onChange(event.target.value)}
        {...described}
      >
        {required && <option value="">Choose…</option>}
        {parameter.values.map((allowed) => (
          <option key={allowed} value={allowed}>
            {allowed}
          </option>
        ))}
      </select>
    );
  } else {
    input = (
      <input
        id={id}
        type={parameter.type === 'number' ? 'number' : 'text'}
        step={parameter.type === 'number' ? 'any' : undefined}
        required={required}
        value={String(value)}
        onChange={(event) => onChange(event.target.value)}
        {...described}
      />
    );
  }
  return (
    <div className={parameter.type === 'boolean' ? 'field checkbox' : 'field'}>
      <label htmlFor={id}>
        {parameter.name}
        {required ? ' (required)' : ''}
      </label>
      {input}
      {parameter.description && (
        <p id={hintId} className="muted small">
          {parameter.description}
          {parameter.default !== undefined ? ` Default: ${String(parameter.default)}.` : ''}
        </p>
      )}
    </div>
  );
}
