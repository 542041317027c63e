#!/usr/bin/env python3
"""Generates the redact corpora: fake keys from a fixed seed, never real ones.
Usage: python3 gen.py (writes positives.tsv, negatives.tsv, realistic.tsv next to it).
Each line: kind<TAB>text, with \\n standing for a line break."""
import base64, hashlib, json, os, random, string, uuid

R = random.Random(20261202)
here = os.path.dirname(os.path.abspath(__file__))
A = string.ascii_letters + string.digits
UP = string.ascii_uppercase
B32 = string.ascii_uppercase + "234567"
HEX = "0123456789abcdef"

def rnd(chars, n):
    while True:
        s = "".join(R.choice(chars) for _ in range(n))
        kinds = [any(c.islower() for c in s), any(c.isupper() for c in s), any(c.isdigit() for c in s)]
        need = [chars != chars.upper() and any(c.islower() for c in chars), any(c.isupper() for c in chars), any(c.isdigit() for c in chars)]
        if all(k or not nd for k, nd in zip(kinds, need)):
            return s

def luhn_complete(prefix, n):
    d = prefix + "".join(R.choice("0123456789") for _ in range(n - len(prefix) - 1))
    for c in "0123456789":
        s, alt = 0, True
        for ch in reversed(d + c):
            x = int(ch)
            if not alt:
                x *= 2
                if x > 9: x -= 9
            s += x; alt = not alt
        if s % 10 == 0:
            return d + c

def iban(cc, bban):
    r = bban + cc + "00"
    num = "".join(str(int(c, 36)) for c in r)
    chk = 98 - int(num) % 97
    return f"{cc}{chk:02d}{bban}"

def group4(s):
    return " ".join(s[i:i+4] for i in range(0, len(s), 4))

def cnid():
    body = "110105" + "19850612" + "".join(R.choice("0123456789") for _ in range(3))
    w = [7,9,10,5,8,4,2,1,6,3,7,9,10,5,8,4,2]
    return body + "10X98765432"[sum(int(c)*x for c, x in zip(body, w)) % 11]

VD = [[0,1,2,3,4,5,6,7,8,9],[1,2,3,4,0,6,7,8,9,5],[2,3,4,0,1,7,8,9,5,6],[3,4,0,1,2,8,9,5,6,7],[4,0,1,2,3,9,5,6,7,8],[5,9,8,7,6,0,4,3,2,1],[6,5,9,8,7,1,0,4,3,2],[7,6,5,9,8,2,1,0,4,3],[8,7,6,5,9,3,2,1,0,4],[9,8,7,6,5,4,3,2,1,0]]
VP = [[0,1,2,3,4,5,6,7,8,9],[1,5,7,6,2,8,3,0,9,4],[5,8,0,3,7,9,6,1,4,2],[8,9,1,6,0,4,3,5,2,7],[9,4,5,3,1,2,6,8,7,0],[4,2,8,6,5,7,3,9,0,1],[2,7,9,3,8,0,6,4,1,5],[7,0,4,6,9,1,3,2,5,8]]
VINV = [0,4,3,2,1,5,6,7,8,9]
def aadhaar():
    d = R.choice("23456789") + "".join(R.choice("0123456789") for _ in range(10))
    c = 0
    for i, ch in enumerate(reversed(d)):
        c = VD[c][VP[(i + 1) % 8][int(ch)]]
    return d + str(VINV[c])

def dni():
    n = R.randrange(10**7, 10**8)
    return f"{n}{'TRWAGMYFPDXBNJZSQVHLCKE'[n % 23]}"

def b64u(b): return base64.urlsafe_b64encode(b).rstrip(b"=").decode()
def jwt():
    h = b64u(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    p = b64u(json.dumps({"sub": str(R.randrange(10**6)), "name": "Test User", "iat": 1767225600}).encode())
    return f"{h}.{p}.{rnd(A + '-_', 43)}"

def pem(kind):
    body = base64.b64encode(bytes(R.randrange(256) for _ in range(180))).decode()
    lines = "\\n".join(body[i:i+64] for i in range(0, len(body), 64))
    return f"-----BEGIN {kind}-----\\n{lines}\\n-----END {kind}-----"

def hf(): return "hf_" + rnd(string.ascii_letters, 34)

pos = [
    ("aws-access-key", f"AWS access key id AKIA{rnd(B32, 16)}"),
    ("aws-access-key", f"aws_access_key_id = ASIA{rnd(B32, 16)}"),
    ("aws-secret-key", f"aws_secret_access_key = {rnd(A + '/+', 40)}"),
    ("aws-secret-key", f"the AWS secret is {rnd(A + '/+', 40)}"),
    ("gcp-api-key", f"maps key AIza{rnd(A + '_-', 35)}"),
    ("gcp-service-account-key", f'"private_key_id": "{rnd(HEX, 40)}"'),
    ("google-oauth-token", f"ya29.{rnd(A + '_-', 120)}"),
    ("google-oauth-secret", f"client secret GOCSPX-{rnd(A + '_-', 28)}"),
    ("azure-storage-key", f"DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={base64.b64encode(bytes(R.randrange(256) for _ in range(64))).decode()};EndpointSuffix=core.windows.net"),
    ("azure-ad-client-secret", f"azure client secret {rnd(A, 3)}8Q~{rnd(A + '_~.-', 34)}"),
    ("github-token", f"ghp_{rnd(A, 36)}"),
    ("github-token", f"token gho_{rnd(A, 36)} for the app"),
    ("github-token", f"github_pat_{rnd(A, 22)}_{rnd(A, 59)}"),
    ("gitlab-token", f"glpat-{rnd(A + '_-', 20)}"),
    ("openai-key", f"OPENAI_API_KEY=sk-proj-{rnd(A + '_-', 48)}T3BlbkFJ{rnd(A, 20)}"),
    ("openai-key", f"old key sk-{rnd(A, 48)}"),
    ("anthropic-key", f"sk-ant-api03-{rnd(A + '_-', 93)}AA"),
    ("huggingface-token", f"HF token {hf()}"),
    ("slack-token", f"xoxb-{R.randrange(10**11, 10**12)}-{R.randrange(10**12, 10**13)}-{rnd(A, 24)}"),
    ("slack-token", f"xoxp-{R.randrange(10**11, 10**12)}-{R.randrange(10**11, 10**12)}-{R.randrange(10**11, 10**12)}-{rnd(HEX, 32)}"),
    ("slack-webhook", f"https://hooks.slack.com/services/T{rnd(UP + string.digits, 8)}/B{rnd(UP + string.digits, 10)}/{rnd(A, 24)}"),
    ("discord-webhook", f"https://discord.com/api/webhooks/{R.randrange(10**17, 10**18)}/{rnd(A + '_-', 68)}"),
    ("stripe-key", f"sk_live_{rnd(A, 24)}"),
    ("stripe-key", f"rk_test_{rnd(A, 24)}"),
    ("stripe-webhook-secret", f"whsec_{rnd(A, 32)}"),
    ("twilio-key", f"SK{rnd(HEX, 32)}"),
    ("twilio-key", f"twilio auth token {rnd(HEX, 32)}"),
    ("sendgrid-key", f"SG.{rnd(A + '_-', 22)}.{rnd(A + '_-', 43)}"),
    ("npm-token", f"npm_{rnd(A, 36)}"),
    ("npm-token", f"//registry.npmjs.org/:_authToken={uuid.UUID(int=R.getrandbits(128))}"),
    ("pypi-token", f"pypi-AgEIcHlwaS5vcmc{rnd(A + '_-', 70)}"),
    ("digitalocean-token", f"dop_v1_{rnd(HEX, 64)}"),
    ("shopify-token", f"shpat_{rnd(HEX, 32)}"),
    ("databricks-token", f"dapi{rnd(HEX, 32)}"),
    ("vault-token", f"hvs.{rnd(A + '_-', 90)}"),
    ("telegram-bot-token", f"{R.randrange(10**8, 10**9)}:AA{rnd(A + '_-', 33)}"),
    ("mailchimp-key", f"{rnd(HEX, 32)}-us{R.randrange(1, 21)}"),
    ("linear-key", f"lin_api_{rnd(A, 40)}"),
    ("postman-key", f"PMAK-{rnd(HEX, 24)}-{rnd(HEX, 34)}"),
    ("square-token", f"sq0atp-{rnd(A + '_-', 22)}"),
    ("groq-key", f"gsk_{rnd(A, 52)}"),
    ("perplexity-key", f"pplx-{rnd(A, 48)}"),
    ("xai-key", f"xai-{rnd(A, 80)}"),
    ("notion-token", f"ntn_{rnd(A, 46)}"),
    ("private-key", pem("RSA PRIVATE KEY")),
    ("private-key", pem("OPENSSH PRIVATE KEY")),
    ("private-key", pem("EC PRIVATE KEY")),
    ("private-key", pem("PGP PRIVATE KEY BLOCK")),
    ("private-key", f"AGE-SECRET-KEY-1{rnd(UP + string.digits, 58)}"),
    ("jwt", jwt()),
    ("url-credentials", f"postgres://app:{rnd(A, 14)}@db.internal:5432/orders"),
    ("url-credentials", "postgres://user:pass@localhost/app"),
    ("url-credentials", f"mongodb+srv://admin:{rnd(A, 12)}@cluster0.mongodb.net/test"),
    ("url-credentials", f"redis://:{rnd(A, 16)}@cache:6379/0"),
    ("password", f"DB_PASSWORD={rnd(A + '!#%', 14)}"),
    ("password", "the password is hunter22"),
    ("password", "my wifi password is Tr0ub4dor&3"),
    ("password", "Server=db;Database=app;User Id=sa;Password=S3cure!Pass;"),
    ("password", 'password: "correct horse battery staple"'),
    ("secret-assignment", f'client_secret: "{rnd(A, 32)}"'),
    ("secret-assignment", f"API_TOKEN={rnd(A, 40)}"),
    ("basic-auth", "Authorization: Basic " + base64.b64encode(f"deploy:{rnd(A, 12)}".encode()).decode()),
    ("basic-auth", f"curl -u admin:{rnd(A, 12)} https://api.example.org/v1"),
    ("bearer-token", f"Authorization: Bearer {rnd(A, 40)}"),
    ("payment-card", "card " + group4(luhn_complete("4", 16))),
    ("payment-card", "Visa " + luhn_complete("4", 16)),
    ("payment-card", "Mastercard " + "-".join(group4(luhn_complete("2221", 16)).split())),
    ("payment-card", "amex " + (lambda d: f"{d[:4]} {d[4:10]} {d[10:]}")(luhn_complete("37", 15))),
    ("payment-card", "credit card " + luhn_complete("6011", 16)),
    ("iban", "IBAN " + group4(iban("GB", "NWBK" + "".join(R.choice("0123456789") for _ in range(14))))),
    ("iban", iban("DE", "".join(R.choice("0123456789") for _ in range(18)))),
    ("iban", "pay to " + iban("FR", "".join(R.choice("0123456789") for _ in range(23)))),
    ("national-id", f"SSN {R.randrange(100, 665)}-{R.randrange(10, 99)}-{R.randrange(1000, 9999)}"),
    ("national-id", f"social security number {R.randrange(100, 665)}{R.randrange(10, 99)}{R.randrange(1000, 9999)}"),
    ("national-id", "身份证 " + cnid()),
    ("national-id", "aadhaar " + aadhaar()),
    ("national-id", "DNI " + dni()),
    ("national-id", "national insurance number JG 10 37 26 A"),
]

neg = []
for _ in range(150): neg.append(("uuid", f"request id {uuid.UUID(int=R.getrandbits(128))}"))
for _ in range(150): neg.append(("git-sha", f"fixed in commit {hashlib.sha1(R.randbytes(20)).hexdigest()}"))
for _ in range(100): neg.append(("sha256", f"sha256:{hashlib.sha256(R.randbytes(20)).hexdigest()}"))
for _ in range(50): neg.append(("md5", f"md5 {hashlib.md5(R.randbytes(20)).hexdigest()}"))
CROCK = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
for _ in range(100): neg.append(("ulid", f"event 01{''.join(R.choice(CROCK) for _ in range(24))}"))
for _ in range(30): neg.append(("base64-image", "logo data:image/png;base64," + base64.b64encode(b"\x89PNG\r\n\x1a\n" + R.randbytes(120)).decode()))
for _ in range(20): neg.append(("public-key", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + rnd(A + "+/", 43) + " dev@laptop"))
for _ in range(20): neg.append(("public-key", "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQ" + rnd(A + "+/", 300) + " ci@build"))
for _ in range(10): neg.append(("public-key", pem("PUBLIC KEY")))
for _ in range(10): neg.append(("certificate", pem("CERTIFICATE")))
for _ in range(50): neg.append(("timestamp", f"at {R.randrange(1600000000000, 1800000000000)} ms"))
for _ in range(50): neg.append(("number", f"order {R.randrange(10**11, 10**16)} shipped"))
for _ in range(30): neg.append(("version", f"upgraded to v{R.randrange(1,30)}.{R.randrange(0,99)}.{R.randrange(0,999)} on 2026-{R.randrange(1,13):02d}-{R.randrange(1,29):02d}"))
for _ in range(20): neg.append(("ip", f"server {R.randrange(1,255)}.{R.randrange(0,255)}.{R.randrange(0,255)}.{R.randrange(1,255)}:{R.randrange(1024, 65535)}"))
looks = [
    "We use sk-component-library-v2 for the design system",
    "sk-learn is not a package; scikit-learn is",
    "Read ghp_guidelines_for_reviewers_and_maintainers before merging",
    "AKIAPLACEHOLDERVALUE is the dummy key in the docs",
    "AKIAIOSFODNN7EXAMPLE is AWS's documentation key",
    "The field AKIASOMETHINGLIKETHIS is an all-caps constant",
    "use hf_hub_download to fetch models",
    "npm_config_registry points to the mirror",
    "xoxo from the team",
    "The password is required for the admin page",
    "The password is hashed with bcrypt before storage",
    "password: see the team vault",
    "api_key = os.environ['API_KEY']",
    "token: string (the session token type)",
    "secret_key = settings.SECRET_KEY",
    "Basic auth is disabled on staging",
    "Bearer tokens expire after one hour",
    "Clone with git@github.com:acme/orders.git",
    "The retina asset is logo@2x.png",
    "Install @acme/ui-kit from the private registry",
    "Card numbers are masked as 4111 **** **** 1111",
    "The test card 0000 0000 0000 0000 is rejected",
    "Use postgres://localhost:5432/orders for local development",
    "Connection string: Server=db;Database=app;Trusted_Connection=True;",
    "The JWT header starts with eyJ and is base64url",
    "PIN codes are 4 to 8 digits",
    "glpat- prefix marks GitLab personal access tokens",
    "Stripe keys start with sk_live_ or sk_test_",
    "The AWS secret access key is stored in the vault, never in code",
    "Port range 30000-32767 is for NodePorts",
    "Phone support hours are 9 to 5",
    "IBAN validation uses mod 97",
    "SSN fields are encrypted at rest",
    "private_key_id is a field of the service account JSON",
    "curl -u is used with $USER:$TOKEN in CI",
    "the bearer of this note is Alice",
    "Ticket ABC-1234-5678 tracks the outage",
    "sha1 0123456789abcdef0123456789abcdef01234567 in the docs",
    "Visa and Mastercard are accepted; Amex is not",
    "Build 2024-01-15T10:30:00Z took 12 min",
    "password reset links expire after 24h",
    "The Secret Manager holds the key; access via IAM",
    "AccountKey= is read from the environment",
    "token = ${GITHUB_TOKEN}",
    "password = <your-password>",
    "aws_secret_access_key = YOUR_SECRET_ACCESS_KEY_HERE",
]
for l in looks: neg.append(("look-alike", l))

real = [
    ("aws-secret-key", f"My AWS secret access key is {rnd(A + '/+', 40)}, please remember it"),
    ("gitlab-token", f"use the GitLab token glpat-{rnd(A + '_-', 20)} for CI"),
    ("stripe-key", f"the Stripe live key is sk_live_{rnd(A, 24)}"),
    ("slack-webhook", f"post alerts to https://hooks.slack.com/services/T0{rnd(UP + string.digits, 8)}/B0{rnd(UP + string.digits, 8)}/{rnd(A, 24)}"),
    ("url-credentials", f"prod DB is postgres://orders:{rnd(A, 16)}@10.0.3.4:5432/orders"),
    ("jwt", f"the session JWT for testing is {jwt()}"),
    ("password", "the staging password is Winter2026!"),
    ("npm-token", f"publish with npm token npm_{rnd(A, 36)}"),
    ("twilio-key", f"Twilio API key SK{rnd(HEX, 32)} with secret in 1password"),
    ("sendgrid-key", f"SendGrid key SG.{rnd(A + '_-', 22)}.{rnd(A + '_-', 43)}"),
    ("azure-storage-key", f"Azure: DefaultEndpointsProtocol=https;AccountName=ordersprod;AccountKey={base64.b64encode(R.randbytes(64)).decode()};EndpointSuffix=core.windows.net"),
    ("huggingface-token", f"HF token for private models: {hf()}"),
    ("gcp-service-account-key", f'service account: {{"type": "service_account", "project_id": "acme-prod", "private_key_id": "{rnd(HEX, 40)}"}}'),
    ("basic-auth", "the webhook sends Authorization: Basic " + base64.b64encode(f"hook:{rnd(A, 16)}".encode()).decode()),
    ("openai-key", f"OpenAI key: sk-proj-{rnd(A + '_-', 60)}"),
    ("aws-access-key", f"my AWS key is AKIA{rnd(B32, 16)}"),
    ("github-token", f"GitHub PAT ghp_{rnd(A, 36)} expires in May"),
    ("github-token", f"fine-grained token github_pat_{rnd(A, 22)}_{rnd(A, 59)}"),
    ("slack-token", f"Slack bot token xoxb-{R.randrange(10**11, 10**12)}-{R.randrange(10**12, 10**13)}-{rnd(A, 24)}"),
    ("gcp-api-key", f"Google Maps key AIza{rnd(A + '_-', 35)} restricted to our domain"),
    ("private-key", "deploy key:\\n" + pem("OPENSSH PRIVATE KEY")),
    ("private-key", pem("RSA PRIVATE KEY")),
    ("payment-card", "my card is " + group4(luhn_complete("5", 16)) + " exp 04/29"),
    ("iban", "salary goes to " + group4(iban("NL", "ABNA" + "".join(R.choice("0123456789") for _ in range(10))))),
]

def write(name, rows):
    with open(os.path.join(here, name), "w") as f:
        for k, t in rows:
            f.write(f"{k}\t{t}\n")

write("positives.tsv", pos)
write("negatives.tsv", neg)
write("realistic.tsv", real)
