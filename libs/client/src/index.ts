export * from './weft-client.js';
