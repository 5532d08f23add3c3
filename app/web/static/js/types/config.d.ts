// The type of /config.js, which the web server generates from its configuration
// (app/web/__init__.py): the checker's stand-in, never served.
export const API_ORIGIN: string;
export const WEB_ORIGIN: string;
