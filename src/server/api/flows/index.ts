/** The public face of this folder: what other parts of the service may import. */
export * from './flow-config';
export * from './sql';
export { CreateFlowBody, FlowIdParams, ListFlowsQuery, PatchFlowBody } from './schemas';
export { createFlow, getFlow, listFlows, publishFlow, unpublishFlow, flowPublishProblems, FlowInvalidError, type FlowRecord } from './flows';
