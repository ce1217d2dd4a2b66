"""Labelled prompt/memory pairs for ``recall_floor.py`` (written for this measurement).

``RELATED`` pairs a prompt with the index of the one memory in ``MEMORIES`` that answers or informs it; the
prompts avoid the memory's own words where a user plausibly would. ``UNRELATED`` prompts belong to a coding
session too, but no memory here is about them.
"""

MEMORIES = [
    "The user prefers pnpm over npm for JavaScript projects.",  # 0
    "Tests run with pytest and must pass before every commit.",  # 1
    "Staging uses SQLite; production runs PostgreSQL 16 behind pgbouncer.",  # 2
    "The user's name is Maria and she works in the Lisbon office.",  # 3
    "Code is formatted with ruff, line length 120.",  # 4
    "Releases are tagged on Thursdays; nobody deploys on Fridays.",  # 5
    "The API keys live in the vault, never in the repository.",  # 6
    "The user is learning Rust and wants explanations of borrow checker errors.",  # 7
    "The frontend is written in Svelte with Tailwind for styling.",  # 8
    "CI runs on GitHub Actions; the slow end-to-end job only runs nightly.",  # 9
    "The user dislikes long answers and wants the diff first.",  # 10
    "The billing service is written in Go and owned by the payments team.",  # 11
    "Logs are shipped to Grafana Loki; alerts go to the #ops-alerts Slack channel.",  # 12
    "The user uses Neovim with the LazyVim distribution.",  # 13
    "Docker images are built for both amd64 and arm64.",  # 14
    "The project targets Python 3.12 and uses uv to manage dependencies.",  # 15
    "Database migrations are written with Alembic and reviewed by Bob.",  # 16
    "The user has a dog called Pixel.",  # 17
    "The mobile app is built with React Native and Expo.",  # 18
    "Feature flags are managed in LaunchDarkly.",  # 19
    "The user works in the Europe/Lisbon time zone and starts at 9am.",  # 20
    "Kafka topics are named <team>.<entity>.<event>, e.g. billing.invoice.created.",  # 21
    "The user wants commit messages in the imperative mood, under 72 characters.",  # 22
    "Terraform state is stored in an S3 bucket with DynamoDB locking.",  # 23
    "The search service uses Elasticsearch 8 with a custom analyzer for product names.",  # 24
    "The user is allergic to peanuts.",  # 25
    "The team writes design docs in Notion before starting large changes.",  # 26
    "Windows support matters: two customers run the CLI on Windows Server 2019.",  # 27
    "The user's laptop is a MacBook Pro with an M3 chip and 36 GB of memory.",  # 28
    "Secrets in tests come from a .env.test file that is git-ignored.",  # 29
]

RELATED = [
    ("install the dependencies for the web app", 0),
    ("which package manager should I use for the node project?", 0),
    ("can I commit this now or do I have to check something first", 1),
    ("how do we run the test suite", 1),
    ("what database is used in prod", 2),
    ("why does this query behave differently on staging than in production", 2),
    ("what's my name again", 3),
    ("which office am I based in", 3),
    ("format this file the way the project does", 4),
    ("what max line width do we use", 4),
    ("can we ship this to production tomorrow, it's Friday", 5),
    ("when do we cut a release", 5),
    ("where should I put the Stripe key", 6),
    ("explain this error: cannot borrow `x` as mutable because it is also borrowed as immutable", 7),
    ("add a button component to the UI", 8),
    ("which CSS framework does the web frontend use", 8),
    ("the e2e tests didn't run on my PR, why", 9),
    ("set up a workflow that runs the linter on pull requests", 9),
    ("how long should your replies be", 10),
    ("who should review the change to the invoicing code", 11),
    ("where can I see the error logs for the service", 12),
    ("set up an alert when the error rate goes above 1%", 12),
    ("give me the keybinding to split a window in my editor", 13),
    ("build the container image for the Raspberry Pi too", 14),
    ("which interpreter version should the package support", 15),
    ("add the requests library as a dependency", 15),
    ("add a column to the users table", 16),
    ("what's my pet's name", 17),
    ("the iOS build fails with a Metro bundler error", 18),
    ("turn the new checkout page off for everyone", 19),
    ("schedule the meeting at a time that suits me", 20),
    ("what should the topic for refund events be called", 21),
    ("write the commit message for this change", 22),
    ("where is the infrastructure state kept", 23),
    ("product search doesn't find 'iphone15' when users type 'iphone 15'", 24),
    ("suggest a snack for the team offsite", 25),
    ("I want to rewrite the sync engine, where do I start", 26),
    ("does the path handling work with backslashes", 27),
    ("how many parallel jobs can I run locally for the build", 28),
    ("the test can't find DATABASE_PASSWORD", 29),
]

UNRELATED = [
    "fix the off-by-one error in the pagination helper",
    "rename the variable tmp to something meaningful",
    "what does this regular expression match",
    "write a function that reverses a linked list",
    "explain the difference between a process and a thread",
    "add type hints to utils.py",
    "why is this recursion so slow",
    "convert this callback code to async/await",
    "summarise what this module does",
    "what is the time complexity of this loop",
    "add a docstring to the parse_date function",
    "split this 300-line function into smaller ones",
    "what's the capital of Australia",
    "translate this error message into plain English",
    "generate a UUID for the fixture",
    "sort this list of tuples by the second element",
    "what is a monad",
    "draw an ASCII diagram of this state machine",
    "remove the dead code in the parser",
    "why does floating point 0.1 + 0.2 not equal 0.3",
    "make the CSV export include a header row",
    "write a haiku about autumn",
    "compute the SHA-256 of the string hello",
    "extract the duplicated validation into a helper",
    "what's the difference between a list and a tuple",
    "implement binary search over the sorted array",
    "add a progress bar to the download loop",
    "this function returns None sometimes, find out why",
    "refactor the class to use composition instead of inheritance",
    "what does HTTP status 418 mean",
    "turn this nested loop into a list comprehension",
    "parse the timestamp in this log line",
    "add retries with exponential backoff to the HTTP call",
    "what does the walrus operator do",
    "count the words in this paragraph",
    "how many days are there between March 3 and April 17",
    "make the error message say which file failed",
    "clean up the imports in this file",
    "the matrix multiplication gives the wrong shape",
    "what's a good name for a function that merges two dicts",
]

# Other languages (written for this measurement): per language, memories, related prompts (paired with the index
# of their memory in that language's list; they share words with it in other inflections, or CJK words inside
# longer sentences) and unrelated prompts of a coding session in the same language. All of them are stored in
# one index together with MEMORIES, so an unrelated prompt must not reach any memory of any language.
MULTILINGUAL = {
    "zh": {
        "memories": ["我们的机房在上海，服务器都放在那里。", "项目使用PostgreSQL数据库，每天凌晨备份。",
                     "用户喜欢用Vim写代码，不用图形界面的编辑器。"],
        "related": [("机房在哪个城市？", 0), ("数据库多久备份一次？", 1), ("我平时写代码用什么编辑器？", 2)],
        "unrelated": ["今天天气怎么样？", "帮我把这个函数改成异步的", "解释一下这个正则表达式的意思"],
    },
    # Chinese written around code names, as a developer writes it: more Latin letters than Han in some prompts
    "zh+code": {
        "memories": ["登录接口在 src/auth/login.ts 里，token 过期后会自动刷新。",
                     "CI 用 GitHub Actions 跑 pytest，每次 push 都会触发。", "日志通过 Loki 收集，保留三十天。"],
        "related": [("src/auth/login.ts 的 token 刷新逻辑在哪里？", 0), ("每次 push 都会跑 pytest 吗？", 1),
                    ("Loki 的日志保留多久？", 2)],
        "unrelated": ["帮我写 src/sort.rs 的 quicksort 单元测试", "在 src/cli/main.rs 里用 clap 加一个 --verbose 参数",
                      "把 README.md 翻译成英文"],
    },
    "ja": {
        "memories": ["ユーザーは毎朝九時にデプロイを確認する。", "本番環境のログはS3に保存されている。",
                     "テストはGitHub Actionsで夜間に実行される。"],
        "related": [("デプロイの確認はいつですか？", 0), ("本番のログはどこに保存されていますか？", 1),
                    ("テストはいつ実行されますか？", 2)],
        "unrelated": ["この関数の名前を変えてください", "昼ご飯は何にしようかな", "エラーメッセージを英語に翻訳して"],
    },
    "ru": {
        "memories": ["Ключи API хранятся в хранилище Vault.", "Пользователь предпочитает короткие ответы.",
                     "Сборка запускается каждую ночь на сервере CI."],
        "related": [("Где хранить ключ API?", 0), ("Какие ответы предпочитает пользователь?", 1),
                    ("Когда запускаются ночные сборки?", 2)],
        "unrelated": ["Напиши функцию сортировки списка", "Какая сегодня погода?",
                      "Переведи это сообщение на английский"],
    },
    "de": {
        "memories": ["Die Datenbank wird jede Nacht um drei Uhr gesichert.",
                     "Der Nutzer bevorzugt kurze Antworten ohne lange Erklärungen.",
                     "Unsere Server stehen in einem Rechenzentrum in Frankfurt."],
        "related": [("Wann werden die Datenbanken gesichert?", 0), ("Welche Antworten bevorzugt der Nutzer?", 1),
                    ("In welchem Rechenzentrum stehen die Server?", 2)],
        "unrelated": ["Schreib mir eine Funktion zum Sortieren", "Wie wird das Wetter morgen?",
                      "Übersetze diese Fehlermeldung ins Englische"],
    },
    "es": {
        "memories": ["Los despliegues se hacen los jueves por la tarde.",
                     "El usuario prefiere respuestas cortas y directas.",
                     "Las copias de seguridad se guardan en un bucket de S3."],
        "related": [("¿Qué día hacemos el despliegue?", 0), ("¿Cómo prefiere el usuario las respuestas?", 1),
                    ("¿Dónde se guarda la copia de seguridad?", 2)],
        "unrelated": ["Escribe una función para ordenar una lista", "¿Qué tiempo hará mañana?",
                      "Traduce este mensaje de error al inglés"],
    },
    "fa": {
        "memories": ["کلیدهای API در خزانه Vault نگهداری می‌شوند.", "کاربر پاسخ‌های کوتاه را ترجیح می‌دهد.",
                     "پایگاه داده هر شب ساعت سه پشتیبان‌گیری می‌شود."],
        "related": [("کلید API کجا نگهداری می‌شود؟", 0), ("کاربر چه نوع پاسخی را ترجیح می‌دهد؟", 1),
                    ("پشتیبان پایگاه داده کی گرفته می‌شود؟", 2)],
        "unrelated": ["یک تابع برای مرتب‌سازی لیست بنویس", "هوای فردا چطور است؟",
                      "این پیام خطا را به انگلیسی ترجمه کن"],
    },
    "ko": {
        "memories": ["배포는 매주 금요일 오후에 진행합니다.", "운영 서버의 로그는 S3 버킷에 보관됩니다.",
                     "사용자는 짧고 직접적인 답변을 선호합니다."],
        "related": [("배포는 언제 하나요?", 0), ("운영 로그는 어디에 보관되나요?", 1),
                    ("사용자는 어떤 답변을 선호하나요?", 2)],
        "unrelated": ["리스트를 정렬하는 함수를 작성해 줘", "오늘 날씨 어때요?", "이 오류 메시지를 영어로 번역해 줘"],
    },
}

# Date-phrased prompts over session turns (written for this measurement; LongMemEval-style): the moment asked at,
# the turns of one session as (timestamp, text), and prompts paired with the index of the turn that answers them.
# The prompts are long and name the time; the answer shares few of their words, as a real answer does.
AS_OF = "2026-12-01T10:00:00.000Z"
DATED_TURNS = [
    ("2026-11-24T09:00:00.000Z", "we agreed to drop redis and keep an in-process LRU for the hot keys"),
    ("2026-11-10T09:00:00.000Z", "the cache stampede last month came from the nightly warmup job"),
    ("2026-11-29T15:00:00.000Z", "flaky test is the websocket reconnect one, it sleeps for a fixed 200ms"),
    ("2026-05-12T09:00:00.000Z", "moved the invoices bucket to eu-west-1 for the data residency review"),
    ("2026-11-30T08:00:00.000Z", "rolled back release 4.2.1, the migration locked the orders table for minutes"),
    ("2026-10-02T09:00:00.000Z", "the orders table got a new index on customer_id and created_at"),
    ("2026-11-02T09:00:00.000Z", "storage for invoices is still on the old bucket in us-east-1"),
    ("2026-11-25T11:00:00.000Z", "for the cache we keep redis only for sessions, the rest goes local"),
]
DATED_PROMPTS = [
    ("what did we end up deciding about caching last week, can you remind me of the reasoning", 0),
    ("two days ago some test kept failing randomly in CI, which one was it and why", 2),
    ("in May we changed where some files are stored for compliance, what exactly did we move", 3),
    ("yesterday something went wrong with a deploy and we had to undo it, what happened", 4),
    ("remind me what we said on November 25 about which things stay in redis", 7),
]
