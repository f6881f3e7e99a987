/** The public face of this folder: what other parts of the service may import. */
export { ConnectDestinationBody, ConnectTriggerSourceBody, HandoffIdParams } from './schemas';
export { createHandoff, type HandoffRecord } from './handoffs';
export { sealHandoffTokensAtStart } from './sql';
