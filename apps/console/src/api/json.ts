/** A JSON value as the API sends it (the JSON scalar). */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
