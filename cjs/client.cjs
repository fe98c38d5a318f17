'use strict';
/**
 * `require('hearth/client')` (issue #25 §5). The SDK is an ES module (dist/client/index.js). Node.js
 * >= 20.19 (and 22.12) loads an ES module with require(), so this hands it over; an older Node.js
 * (or one started with --no-experimental-require-module) cannot, and gets an error that names the
 * fix instead of Node's own "No exports main defined". docs/sdk.md "CommonJS".
 */
try {
  module.exports = require('../dist/client/index.js');
} catch (err) {
  const code = err && err.code;
  if (code === 'ERR_REQUIRE_ESM' || code === 'ERR_REQUIRE_ASYNC_MODULE') {
    throw new Error(
      "hearth/client is ESM only and this Node.js cannot require() an ES module: use import { createClient } from 'hearth/client', " +
        "or from CommonJS const { createClient } = await import('hearth/client'), or run Node.js >= 20.19",
      { cause: err },
    );
  }
  throw err;
}
