// Compares two OpenAPI documents (JSON files) with api-smart-diff and prints every difference
// it finds as JSON: [{"type": "breaking" | "non-breaking" | ..., "action", "path", ...}].
// tests/clients/test_breaking_changes.py decides what fails the build.
import { apiCompare } from "api-smart-diff";
import { readFileSync } from "node:fs";

const [before, after] = process.argv.slice(2).map((file) => JSON.parse(readFileSync(file, "utf8")));
const { diffs } = apiCompare(before, after);
const plain = diffs.map(({ type, action, path, before, after }) => ({ type, action, path, before, after }));
process.stdout.write(JSON.stringify(plain));
