import { gzipSync } from 'node:zlib'
import { fileURLToPath } from 'node:url'
import { defineConfig, type Plugin } from 'vite'

/** The budget for the console's JavaScript, gzipped. */
const JS_BUDGET_BYTES = 300 * 1024

/** Prints the gzipped size of all the JavaScript the console ships, against its budget. */
function reportGzippedJs(): Plugin {
  return {
    name: 'herald-console-size',
    apply: 'build',
    generateBundle(_options, bundle) {
      let bytes = 0
      for (const output of Object.values(bundle)) {
        if (output.type === 'chunk') bytes += gzipSync(output.code).length
      }
      const kib = (bytes / 1024).toFixed(1)
      this.info(`console JavaScript: ${kib} KiB gzipped (budget ${JS_BUDGET_BYTES / 1024} KiB)`)
      if (bytes > JS_BUDGET_BYTES) this.warn(`the console's JavaScript is over its budget: ${kib} KiB gzipped`)
    },
  }
}

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  // Herald serves index.html with a <base href> of {PUBLIC_URL path}/console/, so relative asset URLs hold on deep
  // links and behind a path prefix alike.
  base: './',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  logLevel: 'info',
  build: {
    outDir: fileURLToPath(new URL('../dist/console/', import.meta.url)),
    emptyOutDir: true,
    // No data: URLs: the CSP allows images and fonts from 'self' only.
    assetsInlineLimit: 0,
    target: 'es2022',
    sourcemap: false,
  },
  plugins: [reportGzippedJs()],
})
