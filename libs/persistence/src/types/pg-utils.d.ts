/** node-postgres's parameter conversion (`pg/lib/utils.js`), which its own types do not declare. */
declare module 'pg/lib/utils.js' {
  const utils: {
    /** The text form node-postgres sends for a parameter: null, a string, or a Buffer (bytea). */
    prepareValue(value: unknown): string | Buffer | null;
  };
  export default utils;
}
