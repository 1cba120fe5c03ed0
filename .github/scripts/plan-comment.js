// The one plan comment of a pull request (run by actions/github-script): update the comment
// that starts with the report's marker line AND was written by this workflow's token
// (github-actions[bot]), else create it. A read-only token (a pull request from a fork, or
// Dependabot's) cannot comment: the report is then in the job summary only and this step
// warns instead of failing; the check passes or fails by the plan's verdict alone.
'use strict';

const fs = require('fs');

const BOT_LOGIN = 'github-actions[bot]';

module.exports = async ({ github, context, core, path = 'plan-comment.md' }) => {
  const body = fs.readFileSync(path, 'utf8');
  const marker = body.split('\n')[0];
  const issue = { ...context.repo, issue_number: context.issue.number };
  try {
    const comments = await github.paginate(github.rest.issues.listComments,
      { ...issue, per_page: 100 });
    const mine = comments.find(c => c.user && c.user.login === BOT_LOGIN &&
      typeof c.body === 'string' && c.body.startsWith(marker));
    if (mine) {
      await github.rest.issues.updateComment({ ...context.repo, comment_id: mine.id, body });
      return 'updated';
    }
    await github.rest.issues.createComment({ ...issue, body });
    return 'created';
  } catch (error) {
    if (error.status === 403 || error.status === 404) {
      core.warning('The token may not comment on this pull request (a fork or Dependabot): ' +
        'the plan is in the job summary.');
      return 'summary-only';
    }
    throw error;
  }
};
