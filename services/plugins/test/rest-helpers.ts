// Moved to test/helpers/plugin-rest.ts; kept here until every importer switched.
export * from "../../../test/helpers/plugin-rest.js";
