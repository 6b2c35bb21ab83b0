// The search feature's surface for the composition root, the routes and the doctor.
export type { Search, SearchAnswer, SearchHit, SearchQuery } from './types.js'
export type { SearchSpec } from './extract.js'
export { createSearchService, openSearchStore, type SearchDeps, type SearchService } from './service.js'
export { rebuildSearchIndex, type SearchRepair } from './repair.js'
