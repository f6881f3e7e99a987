/** The public face of this folder: what other parts of the service may import. */
export { createEndpoint, getEndpoint, listEndpoints, removeEndpoint, type EndpointRecord } from './endpoints';
export { CreateEndpointBody, EndpointIdParams, ListEndpointsQuery } from './schemas';
