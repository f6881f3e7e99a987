/** Where other steps queue notifications: the hooks they are given. */
import type { Queryable } from '../db/db';
import type { DeliveryError } from '../destinations';
import { enqueueDestinationNotification } from './sql';

/** For `AccessTokens`: a connection just turned `reauthorization_required`. */
export async function notifyReauthorizationRequired(tx: Queryable, connectionId: string, reason: DeliveryError): Promise<void> {
  await enqueueDestinationNotification(
    tx,
    connectionId,
    'destination.reauthorization_required',
    `${reason.message} Conversions for this destination wait (nothing is lost) until it is connected again through a new connect_destination handoff.`,
  );
}
