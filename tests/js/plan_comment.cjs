// Runs .github/scripts/plan-comment.js against a fake GitHub API. argv: the script, the
// comment file, a JSON scenario {comments: [...], fail: {create|update|list: status}}.
// Prints {result, calls, warnings} or {error} as JSON.
'use strict';

const [script, commentFile, scenarioJson] = process.argv.slice(2);
const scenario = JSON.parse(scenarioJson);
const calls = [];
const warnings = [];

function api(name, value) {
  return async (args) => {
    calls.push({ name, args });
    const status = (scenario.fail || {})[name];
    if (status) {
      const error = new Error(`HttpError: ${status}`);
      error.status = status;
      throw error;
    }
    return value;
  };
}

const github = {
  paginate: async (method, args) => { await method(args); return scenario.comments || []; },
  rest: { issues: {
    listComments: api('list', {}),
    createComment: api('create', { data: { id: 99 } }),
    updateComment: api('update', { data: {} }),
  } },
};
const context = { repo: { owner: 'o', repo: 'r' }, issue: { number: 7 } };
const core = { warning: (message) => warnings.push(message), info: () => {} };

require(require('path').resolve(script))({ github, context, core, path: commentFile })
  .then((result) => console.log(JSON.stringify({ result, calls, warnings })))
  .catch((error) => console.log(JSON.stringify({ error: String(error), calls, warnings })));
