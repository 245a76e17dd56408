/**
 * The built-in catalog, one folder per piece. Add a piece by importing its folder here.
 * A factory, so every registry gets its own list (tests may register extra pieces freely).
 */
import type { PieceDef } from "../src/pieces-sdk/types";
import approval from "./approval";
import code from "./code";
import data from "./data";
import delay from "./delay";
import email from "./email";
import feed from "./feed";
import form from "./form";
import github from "./github";
import homeAssistant from "./home-assistant";
import http from "./http";
import influxdb from "./influxdb";
import llm from "./llm";
import mqtt from "./mqtt";
import notify from "./notify";
import oauth2 from "./oauth2";
import runs from "./runs";
import schedule from "./schedule";
import sql from "./sql";
import store from "./store";
import subflows from "./subflows";
import tags from "./tags";
import text from "./text";
import webhook from "./webhook";

export function builtinPieces(): PieceDef[] {
  return [
    approval,
    code,
    data,
    delay,
    email,
    feed,
    form,
    github,
    homeAssistant,
    http,
    influxdb,
    llm,
    mqtt,
    notify,
    oauth2,
    runs,
    schedule,
    sql,
    store,
    subflows,
    tags,
    text,
    webhook,
  ];
}
