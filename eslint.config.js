// ESLint for the browser side (ui/: the instant Explorer, a live class's student page; widgets/: the teacher's
// follower) and its node tests (tests/js/).
import js from "@eslint/js";
import globals from "globals";

export default [
  { ignores: ["ui/vendor/"] }, // (third-party files, as published: ui/vendor/README.md)
  js.configs.recommended,
  { files: ["ui/**/*.js", "widgets/**/*.js"], languageOptions: { globals: { ...globals.browser, Plotly: "readonly" } } },
  { files: ["tests/js/**/*.js", "eslint.config.js"], languageOptions: { globals: globals.node } },
];
