"""Reference pages of the documentation site, generated from the code that defines what they
describe: the CLI (`cli`) and the stack file (`stack_file`). Each module prints its page
(`python -m gpu_infra_tools.reference.<module> > docs/reference/<page>.md`) and a test keeps
the checked-in page current."""
