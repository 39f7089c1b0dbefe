import type { Schemas } from '@pipewright/types';
import type { Page, PageRequest } from '../domain/cursor.js';
import { DomainError, invalidRequestBody } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import type { Principal } from '../domain/principal.js';
import {
  type IdentityKind,
  type IdentityValues,
  identityDataProblems,
  identityFields,
  identityVariables,
  variablePrefix,
} from '../domain/secrets/identities.js';
import { type SecretBox, SecretBoxError } from '../domain/secrets/secret-box.js';
import { formatTime } from '../domain/time.js';
import type { IdentityRecord, Store, Tables } from '../store/index.js';
import { accountOf } from './auth/permissions.js';

type Project = Schemas['Project'];
type Identity = Schemas['Identity'];
type IdentitySpec = Schemas['IdentitySpec'];

/** The associated data of an identity's sealed values: they open in its row only. */
const sealContext = (id: string) => `identity:${id}`;

function toIdentity(record: IdentityRecord): Identity {
  return {
    id: record.id,
    org_id: record.org_id,
    project_id: record.project_id,
    name: record.name,
    kind: record.kind,
    ...(record.description === null ? {} : { description: record.description }),
    fields: record.fields,
    variables: identityVariables(record.kind, record.name, record.fields),
    creation_time: record.creation_time,
    update_time: record.update_time,
  };
}

function unknownIdentity(key: 'id' | 'name', value: string): DomainError {
  return new DomainError(
    'unknown_identity',
    `no identity with ${key} ${JSON.stringify(value)} in the project`,
    {
      [key]: value,
    },
  );
}

/** The key of a running task reads identities, and changes none: it holds their values already. */
function requireAccount(principal: Principal): void {
  accountOf(principal);
}

/**
 * The identities of projects: credentials stored sealed (see domain/secrets/secret-box.ts) under the
 * server's identity key, which never enters the database, and read back without their values.
 * Only the scheduler opens them (revealIdentities), for the tasks that name them.
 */
export function createIdentityService(store: Store, secrets: SecretBox, clock: () => Date) {
  /** The spec, checked beyond its schema, as a record of the project with its values sealed. */
  const recordOf = async (
    tables: Tables,
    project: Project,
    id: string,
    spec: IdentitySpec,
    times: { creation_time: string; update_time: string },
  ): Promise<IdentityRecord> => {
    const values = spec.data as IdentityValues;
    const problems = identityDataProblems(spec.kind, values);
    if (problems.length > 0) throw invalidRequestBody(problems);
    const prefix = variablePrefix(spec.name);
    const holder = await tables.identities.getByVariablePrefix(project.id, prefix);
    if (holder && holder.id !== id) {
      const message =
        holder.name === spec.name
          ? `an identity named ${JSON.stringify(spec.name)} already exists in the project`
          : `identity ${JSON.stringify(holder.name)} of the project already gives the variables of ${JSON.stringify(spec.name)} (${prefix}_...)`;
      throw new DomainError('duplicate_identity_name', message, { name: holder.name });
    }
    return {
      id,
      org_id: project.org_id,
      project_id: project.id,
      name: spec.name,
      variable_prefix: prefix,
      kind: spec.kind,
      description: spec.description ?? null,
      fields: identityFields(spec.kind, values),
      sealed_values: secrets.seal(JSON.stringify(values), sealContext(id)),
      ...times,
    };
  };

  const recordById = async (tables: Tables, project: Project, id: string): Promise<IdentityRecord> => {
    const record = await tables.identities.get(project.id, id);
    if (!record) throw unknownIdentity('id', id);
    return record;
  };

  return {
    async list(project: Project, request: PageRequest): Promise<Page<Identity>> {
      const page = await store.identities.list(project.id, request);
      return { ...page, elements: page.elements.map(toIdentity) };
    },
    get: async (project: Project, id: string): Promise<Identity> =>
      toIdentity(await recordById(store, project, id)),
    async getByName(project: Project, name: string): Promise<Identity> {
      const record = await store.identities.getByName(project.id, name);
      if (!record) throw unknownIdentity('name', name);
      return toIdentity(record);
    },
    async create(principal: Principal, project: Project, spec: IdentitySpec): Promise<Identity> {
      requireAccount(principal);
      const now = formatTime(clock());
      return store.transaction(async (tx) => {
        const record = await recordOf(tx, project, newId(), spec, { creation_time: now, update_time: now });
        await tx.identities.insert(record);
        return toIdentity(record);
      });
    },
    async update(principal: Principal, project: Project, id: string, spec: IdentitySpec): Promise<Identity> {
      requireAccount(principal);
      return store.transaction(async (tx) => {
        const { creation_time } = await recordById(tx, project, id);
        const record = await recordOf(tx, project, id, spec, {
          creation_time,
          update_time: formatTime(clock()),
        });
        await tx.identities.replace(record);
        return toIdentity(record);
      });
    },
    async delete(principal: Principal, project: Project, id: string): Promise<void> {
      requireAccount(principal);
      if (!(await store.identities.delete(project.id, id))) throw unknownIdentity('id', id);
    },
    /**
     * Whether the identities of the database were sealed under this server's key. The first
     * key a database meets becomes its key; a server with another one must not start.
     */
    async adoptKey(): Promise<boolean> {
      return store.transaction(async (tx) => {
        await tx.identities.recordKeyFingerprint(secrets.fingerprint);
        return (await tx.identities.keyFingerprint()) === secrets.fingerprint;
      });
    },
  };
}

export type IdentityService = ReturnType<typeof createIdentityService>;

/** An identity of a project with its values, for a task that names it. */
export interface RevealedIdentity {
  name: string;
  kind: IdentityKind;
  values: IdentityValues;
}

/**
 * The identities `names` of a project with their values, for a task starting now; or why the
 * task cannot have them: an identity the project does not have, or one that does not open with
 * this server's key.
 */
export async function revealIdentities(
  tables: Tables,
  secrets: SecretBox,
  project: Project,
  names: readonly string[],
): Promise<{ identities: RevealedIdentity[] } | { problem: string }> {
  const identities: RevealedIdentity[] = [];
  for (const name of names) {
    const record = await tables.identities.getByName(project.id, name);
    if (!record) {
      return {
        problem: `the task names identity ${JSON.stringify(name)}, which project ${JSON.stringify(project.name)} does not have (create it with POST /identities)`,
      };
    }
    let values: IdentityValues;
    try {
      values = JSON.parse(secrets.open(record.sealed_values, sealContext(record.id))) as IdentityValues;
    } catch (error) {
      if (!(error instanceof SecretBoxError)) throw error;
      return {
        problem: `identity ${JSON.stringify(name)} cannot be decrypted: the server's identity key is not the one it was stored with`,
      };
    }
    identities.push({ name, kind: record.kind, values });
  }
  return { identities };
}
