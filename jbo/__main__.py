import sys

from jbo.cli import main

sys.exit(main())
