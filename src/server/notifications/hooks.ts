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
    // Said so a restart with the old key (credentials that do not open) or a platform that accepts the grant again is
    // not contradicted: a passing connection test recovers the destination as a reconnect does.
    `${reason.message} Conversions for this destination wait (nothing is lost) and are sent as soon as it works again: connected again through a new connect_destination handoff (Reconnect on the dashboard's Destinations page), or a connection test that passes.`,
  );
}
