import type { Schemas } from '@pipewright/types';
import { nextTick } from '../domain/events/schedules.js';
import { formatTime } from '../domain/time.js';
import type { createResourceService } from './resources.service.js';

type Project = Schemas['Project'];

/**
 * When the triggers of connector `time` tick next, from their installed schedules. An install
 * that changes a schedule plans it from the time of the install, which is past: the ticks after
 * now are the ones the ticker runs, with no need of its stored state.
 */
export function createNextTicksService(
  resources: ReturnType<typeof createResourceService>,
  clock: () => Date,
) {
  return {
    /** The next `count` ticks of a resource of the project after now; none but for a time trigger. */
    async get(project: Project, id: string, count: number): Promise<Schemas['NextTicks']> {
      const { spec } = await resources.get(project, id);
      const ticks: string[] = [];
      if (spec.type === 'trigger' && spec.data.connector === 'time') {
        const schedule = spec.data.parameters;
        for (
          let tick = nextTick(schedule, clock());
          tick && ticks.length < count;
          tick = nextTick(schedule, tick)
        ) {
          ticks.push(formatTime(tick));
        }
      }
      return { resource_id: id, next_ticks: ticks };
    },
  };
}
