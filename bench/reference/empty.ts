/**
 * A module that does nothing, bundled as a Lambda is (`npm run bench`, section bundles): what
 * loading any bundle costs before its own code runs (resolving and reading the file, the banner).
 */
export {};
