import type { Schemas } from '@pipewright/types';
import type { Page, PageRequest } from '../domain/cursor.js';
import type { NotificationDeliveryFilters, Store } from '../store/index.js';

type Project = Schemas['Project'];

/** What the API offers of notifications: their deliveries, each with its attempts. */
export function createNotificationService(store: Store) {
  return {
    list(
      project: Project,
      filters: NotificationDeliveryFilters,
      request: PageRequest,
    ): Promise<Page<Schemas['NotificationDelivery']>> {
      return store.notificationDeliveries.list(project.id, filters, request);
    },
  };
}
