"""`python -m problem_codes`: rewrite the code table of schema/README.md from the registries."""

import sys

from problem_codes.doc_table import main

sys.exit(main())
