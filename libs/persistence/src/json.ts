/**
 * A JSON value as stored in a `jsonb` column. Persistence keeps its own alias so it never
 * imports the engine (`libs/persistence` imports neither the engine nor an app).
 */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
