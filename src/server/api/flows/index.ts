/** The public face of this folder: what other parts of the service may import. */
export * from './flow-config';
export * from './sql';
export { CreateFlowBody, FlowIdParams, ListFlowsQuery, PatchFlowBody } from './schemas';
export { createFlow, getFlow, listFlows, publishFlow, unpublishFlow, flowPublishProblems, flowsPublishProblems, flowWarnings, FlowInvalidError, type FlowRecord, type FlowWarning, type PublishedFlowRecord } from './flows';
export { flowOverlaps, overlapMessage, type FlowOverlap } from './overlaps';
