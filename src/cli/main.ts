console.log("hello from ts", process.argv.slice(2));
