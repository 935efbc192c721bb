from tools.refresh_knowledge import main

raise SystemExit(main())
