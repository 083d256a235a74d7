// Gives a fresh clone its local secrets: copies .dev.vars.example to .dev.vars unless one exists.
import { copyFileSync, existsSync } from "node:fs";

if (!existsSync(".dev.vars")) {
  copyFileSync(".dev.vars.example", ".dev.vars");
  console.log("created .dev.vars from .dev.vars.example (local development secrets)");
}
