/**
 * The version of Weft this build is, as `package.json` names it; workers register with it, so an
 * operator sees which version each runs during a rolling upgrade. A unit test keeps the two equal.
 */
export const WEFT_VERSION = '0.1.0';
