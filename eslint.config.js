// ESLint for the instant Explorer's browser side (ui/explorer/) and its node tests (tests/js/).
import js from "@eslint/js";
import globals from "globals";

export default [
  js.configs.recommended,
  { files: ["ui/explorer/**/*.js"], languageOptions: { globals: { ...globals.browser, Plotly: "readonly" } } },
  { files: ["tests/js/**/*.js", "eslint.config.js"], languageOptions: { globals: globals.node } },
];
