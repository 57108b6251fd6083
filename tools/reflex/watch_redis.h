// `reflex watch --redis URL`: a diagnoser of the deployment (README,
// "Deployment"); cmd_watch.cpp hands over to it when --redis is given.
#pragma once

namespace reflex::cli {
int run_watch_redis(int argc, char** argv);
}
