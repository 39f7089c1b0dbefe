// What a thread that purges expired data, or checkpoints the database, needs and nothing else:
// the library's main entry point would load the whole API (Express, the validator, the spec)
// into that thread.
export {
  createPurger,
  type PurgeCounts,
  type Purger,
  type PurgerOptions,
  type RetentionOptions,
} from './scheduler/purger.js';
export { openStore } from './store/index.js';
