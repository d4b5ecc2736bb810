// The docs page's own words in the page's language (the one the table uses); the contract
// Swagger UI renders stays in English, the language it is written in.

import { startI18n } from "./i18n.js";

startI18n();
