import { createProvisioningService, DomainError, openStore } from '@pipewright/server';
import {
  databaseOf,
  dataDirOf,
  type ParsedCommand,
  parseCommand,
  serveConfig,
  USAGE,
  UsageError,
} from './config.js';
import { privateDatabaseFile, StartupError } from './data-dir.js';
import { serve } from './serve.js';

function required(values: ParsedCommand['values'], name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

/** Runs one admin command against the database of the data directory, and prints the key. */
async function administer(parsed: ParsedCommand): Promise<void> {
  const { command, positionals, values } = parsed;
  const store = await openStore(
    databaseOf(values, process.env) ?? privateDatabaseFile(dataDirOf(values, process.env)),
  );
  try {
    const provisioning = createProvisioningService(store, () => new Date());
    let apiKey: string;
    if (command === 'create-organization') {
      const [name] = positionals;
      if (!name || positionals.length > 1) throw new UsageError('create-organization takes one NAME');
      apiKey = (await provisioning.createOrganization(name, required(values, 'admin-email'))).apiKey;
      process.stdout.write(`Created organization "${name}" and its admin account. API key:\n`);
    } else if (command === 'create-account') {
      const role = required(values, 'role');
      if (role !== 'admin' && role !== 'user') throw new UsageError('--role must be admin or user');
      apiKey = await provisioning.createAccount(
        required(values, 'organization'),
        required(values, 'email'),
        role,
      );
      process.stdout.write(`Created ${role} account ${values.email}. API key:\n`);
    } else {
      apiKey = await provisioning.createApiKey(required(values, 'email'));
      process.stdout.write(`Created an API key for ${values.email}:\n`);
    }
    process.stdout.write(`${apiKey}\n`);
  } finally {
    await store.close();
  }
}

async function main(): Promise<void> {
  try {
    const parsed = parseCommand(process.argv.slice(2));
    if (parsed.command === 'help') {
      process.stdout.write(USAGE);
    } else if (parsed.command === 'serve') {
      await serve(serveConfig(parsed.values, process.env));
    } else {
      await administer(parsed);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`pipewright-server: ${error.message}\n\n${USAGE}`);
      process.exit(2);
    }
    if (error instanceof DomainError || error instanceof StartupError) {
      process.stderr.write(`pipewright-server: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

await main();
