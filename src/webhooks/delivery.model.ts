/** One webhook delivery (an event owed to one endpoint), as the repositories return it. */
import type { DeliveryStatus } from '../db/schema.js';

export interface Delivery {
  id: string;
  webhookId: string;
  eventId: string;
  merchantId: string;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: number | null;
  deliveredAt: number | null;
  lastError: string | null;
  responseStatus: number | null;
  createdAt: number;
  updatedAt: number;
}
