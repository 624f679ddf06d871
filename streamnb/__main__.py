from streamnb.cli import main

raise SystemExit(main())
